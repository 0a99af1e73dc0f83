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
1	0.35822208014284473	1
2	0.3583244591382962	2
3	0.3581965239320836	3
4	0.35799798860784543	4
EOD
$d1 << EOD
1	0.5645211338412337	1
2	0.5606231902852785	2
3	0.5589946132550977	3
4	0.5542221496636979	4
EOD
plot $d0 using 1:2 with linespoints lw 2 pt 7 title "fabric.links.host.bandwidth=400Gbps", \
     $d1 using 1:2 with linespoints lw 2 pt 7 title "fabric.links.host.bandwidth=800Gbps"
