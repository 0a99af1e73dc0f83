# Written by `syncsim plot`; run `gnuplot docs/capacity-gpus-mfu.svg.gp` to redraw.
set terminal svg size 900,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output "docs/capacity-gpus-mfu.svg"
set title "capacity-gpus.yaml: Llama-3-70B DDP on H100, packed on a 4096-GPU spine-leaf (800G uplinks)"
set xlabel "GPUs in the job (workload.data_parallel)"
set ylabel "MFU"
set grid
set key below
set datafile separator '\t'
set logscale x
set xtics (256, 512, 1024, 2048, 4096)
set autoscale xfix
set offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05
$d0 << EOD
256	0.6642560811804424	256
512	0.6641073452768502	512
1024	0.663974081606367	1024
2048	0.6638135045414594	2048
4096	0.6636701030762908	4096
EOD
$d1 << EOD
256	0.6633794635319578	256
512	0.663255939807777	512
1024	0.6630453874682676	1024
2048	0.6624422270538468	2048
4096	0.6622861453255336	4096
EOD
$d2 << EOD
256	0.6644024622934975	256
512	0.664276608743774	512
1024	0.6641508945523039	1024
2048	0.6640224604486533	2048
4096	0.6639215920647771	4096
EOD
$d3 << EOD
256	0.6641763090162092	256
512	0.6640136030274798	512
1024	0.663788980301254	1024
2048	0.6636748875760613	2048
4096	0.663465964659183	4096
EOD
plot $d0 using 1:2 with linespoints lw 2 lc 1 dt 1 pt 7 ps 1 title "fabric.links.host.bandwidth=400Gbps, fabric.spine_leaf.oversubscription=1", \
     $d1 using 1:2 with linespoints lw 2 lc 1 dt 2 pt 4 ps 1.6 title "fabric.links.host.bandwidth=400Gbps, fabric.spine_leaf.oversubscription=3", \
     $d2 using 1:2 with linespoints lw 2 lc 2 dt 1 pt 7 ps 1 title "fabric.links.host.bandwidth=800Gbps, fabric.spine_leaf.oversubscription=1", \
     $d3 using 1:2 with linespoints lw 2 lc 2 dt 2 pt 4 ps 1.6 title "fabric.links.host.bandwidth=800Gbps, fabric.spine_leaf.oversubscription=3"
