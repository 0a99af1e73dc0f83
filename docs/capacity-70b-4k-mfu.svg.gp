# Written by `syncsim plot`; run `gnuplot docs/capacity-70b-4k-mfu.svg.gp` to redraw.
set terminal svg size 900,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output "docs/capacity-70b-4k-mfu.svg"
set title "capacity-70b-4k.yaml: Llama-3-70B DDP on 4096 H100, MFU vs leaf oversubscription"
set xlabel "fabric.spine_leaf.oversubscription"
set ylabel "mfu"
set grid
set key below
set datafile separator '\t'
$d0 << EOD
1	0.35822518444686813	1
2	0.3583271648073898	2
3	0.3581985526477475	3
4	0.3580008909977532	4
EOD
$d1 << EOD
1	0.5645284387490302	1
2	0.5606388170961886	2
3	0.5589922594908834	3
4	0.5541944266893808	4
EOD
plot $d0 using 1:2 with linespoints lw 2 pt 7 title "fabric.links.host.bandwidth=400Gbps", \
     $d1 using 1:2 with linespoints lw 2 pt 7 title "fabric.links.host.bandwidth=800Gbps"
